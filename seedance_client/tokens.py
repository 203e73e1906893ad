"""The Pulumi engine's own types, which the client's runner answers: a stack, and a reference to another
stack's outputs. The platform's type table (components/plan/resources.py) takes them from here, since the
client cannot import the platform."""

STACK = "pulumi:pulumi:Stack"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
