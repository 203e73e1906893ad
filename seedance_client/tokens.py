"""The Pulumi engine's own types, which the client's runner answers: a stack, and a reference to another
stack's outputs. The platform's type table (components/plan/resources.py) takes them from here, since the
client cannot import the platform."""

STACK = "pulumi:pulumi:Stack"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
# The invokes a team's program asks where it runs, which the client's offline runner answers (from the
# contract's region); the platform's offline cloud (seedance/offline_cloud.py) answers these and more.
GET_REGION = "aws:index/getRegion:getRegion"
GET_PARTITION = "aws:index/getPartition:getPartition"
GET_CALLER_IDENTITY = "aws:index/getCallerIdentity:getCallerIdentity"
