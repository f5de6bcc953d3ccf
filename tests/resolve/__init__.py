"""Planner tests: the pure resolver over the knowledge base's candidates."""

from __future__ import annotations

from wheelfit.candidates.knowledge import knowledge_set
from wheelfit.kb.matrix import Knowledge
from wheelfit.report import HardwareReport
from wheelfit.resolve import Machine, Plan, Request, resolve


def kb_plan(report: HardwareReport, kb: Knowledge, request: Request) -> Plan:
    """The plan for ``report`` from the knowledge base alone (as ``--offline`` with no cached pages)."""
    machine = Machine.from_report(report)
    return resolve(machine, knowledge_set(kb, machine.platform_key, jetson=machine.jetson), request)
