"""Resolving: a machine and the build candidates in, a plan with reasons out. Pure."""

from .choice import BuildVerdict, judge_build
from .judges import Judge
from .machine import Machine, ResolveError
from .plan import PLAN_SCHEMA_VERSION, PackagePin, Plan, Rejection
from .request import COMPANIONS, DEFAULT_INDEX, Request
from .resolver import resolve

__all__ = [
    "COMPANIONS",
    "DEFAULT_INDEX",
    "PLAN_SCHEMA_VERSION",
    "BuildVerdict",
    "Judge",
    "Machine",
    "PackagePin",
    "Plan",
    "Rejection",
    "Request",
    "ResolveError",
    "judge_build",
    "resolve",
]
