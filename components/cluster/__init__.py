"""The EKS cluster and what runs beside it cluster-wide: kubeconfig, the autoscaler, the descheduler."""
