"""admissionregistration.k8s.io/v1alpha1, off unless ``--runtime-config
admissionregistration.k8s.io/v1alpha1=true``: MutatingAdmissionPolicy as kube 1.32 has it, and
the ValidatingAdmissionPolicy kinds in v1's shape."""
