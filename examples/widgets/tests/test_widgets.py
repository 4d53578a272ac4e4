"""The Widget plugin against a real kplane server: the `kplane` fixture starts one per test."""

import pytest
from kplane.testing import KplaneError


def widget(name, **spec):
    return {"apiVersion": "widgets.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def test_defaults_and_both_versions(kplane):
    [stored] = kplane.apply(widget("small", size={"width": 5}))
    assert stored["spec"] == {"color": "grey", "size": {"width": 5, "height": 5}}
    old = kplane.get("widgets.example.com/v1alpha1", "Widget", "small")
    assert old["spec"] == {"color": "grey", "width": 5, "height": 5}


def test_validation(kplane):
    with pytest.raises(KplaneError) as refused:
        kplane.apply(widget("huge", color="pink", size={"width": 500}))
    assert refused.value.code == 422
    causes = {c["field"] for c in refused.value.status["details"]["causes"]}
    assert causes == {"spec.color", "spec.size.width", "spec.size.height"}


def test_red_widgets_are_refused(kplane):
    with pytest.raises(KplaneError) as refused:
        kplane.apply(widget("red", color="red", size={"width": 1}))
    assert refused.value.code == 403
    assert refused.value.status["message"].endswith("red widgets are not allowed here")


@pytest.mark.kplane(controllers=True)
def test_the_controller_writes_the_status(kplane):
    kplane.apply(widget("big", color="blue", size={"width": 30, "height": 20}))
    big = kplane.wait_for("widgets.example.com/v1", "Widget", "big", condition="Ready")
    assert big["status"]["area"] == 600
