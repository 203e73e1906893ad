"""What a document means, one reader per family (IAM policies, pod specs, network policies, RBAC rules).

Each reader turns every spelling the API accepts into one normal form, so a rule asks its question once
(who outside the account may act, which Pod Security control a pod breaks, which peers a rule admits,
which grant escalates) and a new spelling of the same meaning cannot pass it.
"""
