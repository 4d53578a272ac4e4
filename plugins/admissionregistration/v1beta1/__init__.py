"""admissionregistration.k8s.io/v1beta1, off unless ``--runtime-config
admissionregistration.k8s.io/v1beta1=true``: MutatingAdmissionPolicy as kube 1.34 has it, and
the ValidatingAdmissionPolicy kinds in v1's shape."""
