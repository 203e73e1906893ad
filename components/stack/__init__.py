"""The whole stack: its validated config, the stack-level capacity decision, derived reports. Used by the
Pulumi program in infra/ and by the seedance CLI alike."""
