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
# pulumi-kubernetes objects a team's plan holds whose own inputs are not the objects they make: a Helm v3
# release (its chart's objects are rendered only by the platform's check, from pinned charts), and the
# components the provider builds itself (remote), whose children Pulumi's mock runtime never constructs.
# The SDK's local components (yaml ConfigFile/ConfigGroup, helm v3 Chart, kustomize Directory) register
# their children as plain objects, which are judged.
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
REMOTE_KUBERNETES_COMPONENTS = (
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:yaml/v2:ConfigGroup",
    "kubernetes:helm.sh/v4:Chart",
    "kubernetes:kustomize/v2:Directory",
)
LOCAL_KUBERNETES_COMPONENTS = (
    "kubernetes:yaml:ConfigFile",
    "kubernetes:yaml:ConfigGroup",
    "kubernetes:helm.sh/v3:Chart",
    "kubernetes:kustomize:Directory",
)
