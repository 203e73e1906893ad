"""The VPC, its subnets, security groups, private endpoints and the egress cost model."""
