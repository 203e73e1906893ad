"""The seedance-gpu Pulumi program (`main: infra/`) and its stack configuration model."""
