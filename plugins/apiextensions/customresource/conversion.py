"""A CRD's ``Webhook`` conversion: ConversionReviews to the webhook (apiextensions-apiserver's
``pkg/apiserver/conversion/webhook_converter.go``).

* One review converts every object of a list page (or watch batch) that is not in the desired
  version yet; objects already in it are not sent. The review's version is the first of
  ``conversionReviewVersions`` this server speaks (``v1``, ``v1beta1``).
* The answer is checked as Kubernetes checks it: a v1 review must come back as
  ``apiextensions.k8s.io/v1`` ConversionReview with the request's ``uid``; ``result.status``
  must be ``Success``; as many objects as were sent, each of the desired apiVersion and the same
  kind, name, namespace and uid. Of ``metadata`` the webhook may change only ``labels`` and
  ``annotations`` (validated as on any write); everything else is the original's.
* The webhook is reached at ``clientConfig.url`` or through ``clientConfig.service`` (resolved
  as kube-apiserver resolves it: :func:`kplane.api.service_target`), over https verified with
  ``caBundle``; within :data:`TIMEOUT` seconds, its answer read up to a bound that grows with
  what was sent (:class:`kplane.api.WebhookClient`, which admission webhooks use too).

Every failure is a :class:`ConversionError` with Kubernetes' message (``conversion webhook for
stable.example.com/v2, Kind=CronTab failed: ...``), which the HTTP layer answers as a 500
InternalError Status, as kube-apiserver does.
"""

from __future__ import annotations

from typing import Any

import orjson

from kplane.api import APIError, CallError, WebhookClient, errors, new_uid, validate_annotations, validate_labels

TIMEOUT = 30.0  # seconds for one review, connecting included (kube's webhook client's default)
REVIEW_GROUP = "apiextensions.k8s.io"
REVIEW_VERSIONS = ("v1", "v1beta1")


class ConversionError(Exception):
    """A conversion that failed, with Kubernetes' message."""

    def api_error(self) -> APIError:
        return errors.internal_error(str(self))


class WebhookConverter:
    """One CRD's conversion webhook (``spec.conversion.webhook``)."""

    def __init__(self, webhooks: WebhookClient, group: str, kind: str, webhook: dict[str, Any]) -> None:
        self.webhooks, self.group, self.kind = webhooks, group, kind
        self.client_config: dict[str, Any] = webhook.get("clientConfig") or {}
        self.review_version = next((v for v in webhook.get("conversionReviewVersions") or () if v in REVIEW_VERSIONS), None)

    async def convert(self, objects: list[dict[str, Any]], api_version: str) -> list[dict[str, Any]]:
        """``objects`` in ``api_version``: those not in it yet converted by one review."""
        todo = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != api_version]
        if not todo:
            return objects
        sent = [objects[i] for i in todo]
        failed = f"conversion webhook for {self._gvk(sent[0])}"
        if self.review_version is None:
            raise ConversionError("no supported conversion review versions")
        uid = new_uid()
        review = {"kind": "ConversionReview", "apiVersion": f"{REVIEW_GROUP}/{self.review_version}",
                  "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": sent}}
        try:
            answer = await self._post(orjson.dumps(review))
            converted = self._converted(answer, uid)
        except ConversionError as err:
            raise ConversionError(f"{failed} failed: {err}") from None
        if len(converted) != len(sent):
            raise ConversionError(f"{failed} returned {len(converted)} objects, expected {len(sent)}")
        out = list(objects)
        single = len(objects) == 1
        for position, (index, obj) in enumerate(zip(todo, converted, strict=True)):
            where = "invalid object at index 0" if single else f"invalid converted object at index {position}"
            out[index] = self._checked(objects[index], obj, api_version, f"{failed} returned {where}", single)
        return out

    # -- the request ---------------------------------------------------------------------------
    async def _post(self, body: bytes) -> Any:
        try:
            raw = await self.webhooks.post(self.client_config, body, TIMEOUT)
        except CallError as err:
            raise ConversionError(str(err)) from None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ConversionError("the webhook's answer is not JSON") from None

    # -- the answer ----------------------------------------------------------------------------
    def _converted(self, answer: Any, uid: str) -> list[Any]:
        """The converted objects of a review's answer (``getConvertedObjectsFromResponse``)."""
        if not isinstance(answer, dict):
            raise ConversionError("the webhook's answer is not a ConversionReview")
        if self.review_version == "v1":
            got = f"{answer.get('apiVersion', '')}, Kind={answer.get('kind', '')}"
            if (answer.get("apiVersion"), answer.get("kind")) != (f"{REVIEW_GROUP}/v1", "ConversionReview"):
                raise ConversionError(f"expected webhook response of {REVIEW_GROUP}/v1, Kind=ConversionReview, got {got}")
        response = answer.get("response")
        if not isinstance(response, dict):
            raise ConversionError("no response provided")
        if self.review_version == "v1" and response.get("uid") != uid:  # v1beta1 never checked it
            raise ConversionError(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
        result = response.get("result") if isinstance(response.get("result"), dict) else {}
        if result.get("status") != "Success":
            message = result.get("message")
            if isinstance(message, str) and message:
                raise ConversionError(message)
            raise ConversionError(f"response.result.status was '{result.get('status') or ''}', not 'Success'")
        converted = response.get("convertedObjects") or []
        if not isinstance(converted, list):
            raise ConversionError("response.convertedObjects is not a list")
        return converted

    def _checked(self, original: dict[str, Any], obj: Any, api_version: str, where: str, single: bool) -> dict[str, Any]:
        """A converted object checked against its original, with the original's metadata but
        for the labels and annotations the webhook set (``validateConvertedObject``,
        ``restoreObjectMeta``)."""
        if not isinstance(obj, dict):
            raise ConversionError(f"{where}: the converted object is not a JSON object")
        if obj.get("apiVersion") != api_version:
            raise ConversionError(f"{where}: invalid groupVersion (expected {api_version}, received {obj.get('apiVersion') or ''})")
        if obj.get("kind") != original.get("kind"):
            raise ConversionError(f"{where}: invalid kind (expected {original.get('kind')}, received {obj.get('kind') or ''})")
        meta, got = original.get("metadata") or {}, obj.get("metadata")
        for name, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
            mine, theirs = meta.get(name) or "", (got.get(name) or "") if isinstance(got, dict) else ""
            if mine != theirs:
                raise ConversionError(f"{where}: must have the same {label}: {mine} != {theirs}")
        invalid_meta = where.replace("invalid converted object", "invalid metadata in object") if not single \
            else where.replace("invalid object at index 0", "invalid metadata")
        if not isinstance(got, dict):
            raise ConversionError(f"{invalid_meta}: missing metadata in converted object" if got is None
                                  else f"{invalid_meta}: invalid metadata of type {type(got).__name__} in converted object")
        restored = orjson.loads(orjson.dumps(meta))
        for name, validate, path in (("labels", validate_labels, "metadata.labels"),
                                     ("annotations", validate_annotations, "metadata.annotation")):
            value = got.get(name)
            if value is None:
                restored.pop(name, None)
                continue
            if not isinstance(value, dict):
                raise ConversionError(f"{invalid_meta}: invalid metadata.{name} of type {type(value).__name__} in converted object")
            for key, item in value.items():
                if not isinstance(item, str):
                    raise ConversionError(f"{invalid_meta}: metadata.{name}[{key}] must be a string, but is "
                                          f"{type(item).__name__} in converted object")
            if value != (meta.get(name) or {}):
                problems = validate(value, path)
                if problems:
                    text = str(problems[0]) if len(problems) == 1 else "[" + ", ".join(map(str, problems)) + "]"
                    raise ConversionError(f"{invalid_meta}: {text}")
            restored[name] = value
        return {**obj, "metadata": restored}

    def _gvk(self, obj: dict[str, Any]) -> str:
        """An object's group/version and kind as Go prints a GroupVersionKind."""
        return f"{obj.get('apiVersion') or self.group}, Kind={obj.get('kind') or self.kind}"
