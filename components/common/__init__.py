"""Small pieces several domains share: config field errors, IAM documents, Kubernetes manifest helpers."""
