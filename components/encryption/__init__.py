"""The stack's customer-managed KMS key."""
