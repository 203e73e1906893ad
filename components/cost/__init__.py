"""What a plan costs a month (the estimate every reader shares) and the AWS budget with its alerts."""
