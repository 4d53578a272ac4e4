"""Protobuf tables of batch/v1 Job and CronJob (``kubectl create job`` and ``kubectl create cronjob``
send them). Field numbers are those of ``k8s.io/api`` ``batch/v1/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the format. The pod template comes from core/v1's tables."""

from __future__ import annotations

from kplane.api import LABEL_SELECTOR, OBJECT_META, TIME, Field, Message
from kplane.plugins.core.v1.protobuf import OBJECT_REFERENCE, POD_TEMPLATE_SPEC

ON_EXIT_CODES = Message("PodFailurePolicyOnExitCodesRequirement", {
    1: Field("containerName", "string", pointer=True),
    2: Field("operator", "string"),
    3: Field("values", "int32", repeated=True),
})
ON_POD_CONDITIONS = Message("PodFailurePolicyOnPodConditionsPattern", {1: Field("type", "string"), 2: Field("status", "string")})
POD_FAILURE_POLICY_RULE = Message("PodFailurePolicyRule", {
    1: Field("action", "string"),
    2: Field("onExitCodes", ON_EXIT_CODES),
    3: Field("onPodConditions", ON_POD_CONDITIONS, repeated=True),
})
POD_FAILURE_POLICY = Message("PodFailurePolicy", {1: Field("rules", POD_FAILURE_POLICY_RULE, repeated=True)})
SUCCESS_POLICY_RULE = Message("SuccessPolicyRule", {
    1: Field("succeededIndexes", "string", pointer=True),
    2: Field("succeededCount", "int32", pointer=True),
})
SUCCESS_POLICY = Message("SuccessPolicy", {1: Field("rules", SUCCESS_POLICY_RULE, repeated=True)})

JOB_SPEC = Message("JobSpec", {
    1: Field("parallelism", "int32", pointer=True),
    2: Field("completions", "int32", pointer=True),
    3: Field("activeDeadlineSeconds", "int64", pointer=True),
    11: Field("podFailurePolicy", POD_FAILURE_POLICY),
    16: Field("successPolicy", SUCCESS_POLICY),
    7: Field("backoffLimit", "int32", pointer=True),
    12: Field("backoffLimitPerIndex", "int32", pointer=True),
    13: Field("maxFailedIndexes", "int32", pointer=True),
    4: Field("selector", LABEL_SELECTOR),
    5: Field("manualSelector", "bool", pointer=True),
    6: Field("template", POD_TEMPLATE_SPEC),
    8: Field("ttlSecondsAfterFinished", "int32", pointer=True),
    9: Field("completionMode", "string", pointer=True),
    10: Field("suspend", "bool", pointer=True),
    14: Field("podReplacementPolicy", "string", pointer=True),
    15: Field("managedBy", "string", pointer=True),
})
JOB_CONDITION = Message("JobCondition", {
    1: Field("type", "string"),
    2: Field("status", "string"),
    3: Field("lastProbeTime", TIME),
    4: Field("lastTransitionTime", TIME),
    5: Field("reason", "string"),
    6: Field("message", "string"),
})
UNCOUNTED_TERMINATED_PODS = Message("UncountedTerminatedPods", {
    1: Field("succeeded", "string", repeated=True),
    2: Field("failed", "string", repeated=True),
})
JOB_STATUS = Message("JobStatus", {
    1: Field("conditions", JOB_CONDITION, repeated=True),
    2: Field("startTime", TIME),
    3: Field("completionTime", TIME),
    4: Field("active", "int32"),
    5: Field("succeeded", "int32"),
    6: Field("failed", "int32"),
    11: Field("terminating", "int32", pointer=True),
    7: Field("completedIndexes", "string"),
    10: Field("failedIndexes", "string", pointer=True),
    8: Field("uncountedTerminatedPods", UNCOUNTED_TERMINATED_PODS),
    9: Field("ready", "int32", pointer=True),
})
JOB = Message("Job", {1: Field("metadata", OBJECT_META), 2: Field("spec", JOB_SPEC), 3: Field("status", JOB_STATUS)})

JOB_TEMPLATE_SPEC = Message("JobTemplateSpec", {1: Field("metadata", OBJECT_META), 2: Field("spec", JOB_SPEC)})
CRON_JOB_SPEC = Message("CronJobSpec", {
    1: Field("schedule", "string"),
    8: Field("timeZone", "string", pointer=True),
    2: Field("startingDeadlineSeconds", "int64", pointer=True),
    3: Field("concurrencyPolicy", "string"),
    4: Field("suspend", "bool", pointer=True),
    5: Field("jobTemplate", JOB_TEMPLATE_SPEC),
    6: Field("successfulJobsHistoryLimit", "int32", pointer=True),
    7: Field("failedJobsHistoryLimit", "int32", pointer=True),
})
CRON_JOB_STATUS = Message("CronJobStatus", {
    1: Field("active", OBJECT_REFERENCE, repeated=True),
    4: Field("lastScheduleTime", TIME),
    5: Field("lastSuccessfulTime", TIME),
})
CRON_JOB = Message("CronJob", {1: Field("metadata", OBJECT_META), 2: Field("spec", CRON_JOB_SPEC), 3: Field("status", CRON_JOB_STATUS)})
