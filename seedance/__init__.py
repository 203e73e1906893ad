"""seedance: offline planning and checks for Pulumi programs, and the CLI of seedance-infra."""
