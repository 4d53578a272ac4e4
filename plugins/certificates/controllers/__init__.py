"""The certificate controllers of kube-controller-manager (``pkg/controller/certificates``):
csrsigning, csrapproving and csrcleaner, all acting as ``kube-system/certificate-controller``."""
