"""Controllers of the core group, registered through ``kplane_register_controllers``: the
namespace controller and the simulated nodes (kubelets and scheduler)."""
