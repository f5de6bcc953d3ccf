"""Resolving: a hardware report and the knowledge base in, a plan with reasons out. Pure."""

from .machine import ResolveError
from .plan import PackagePin, Plan, Rejection
from .resolver import COMPANIONS, DEFAULT_INDEX, Request, resolve

__all__ = ["COMPANIONS", "DEFAULT_INDEX", "PackagePin", "Plan", "Rejection", "Request", "ResolveError", "resolve"]
