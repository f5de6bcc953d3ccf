"""Install-side errors: each message is one line saying what went wrong and what to do."""

from __future__ import annotations

from ..errors import WheelfitError

__all__ = ["BackendError", "EnvironmentProbeError", "InstallError", "UnsafeWheelError", "WheelNotFoundError"]


class InstallError(WheelfitError):
    """An install could not be done; the target environment was left as it was."""


class UnsafeWheelError(InstallError):
    """A wheel's archive could write outside its install directories or does not match its name."""


class WheelNotFoundError(InstallError):
    """The variant index has no wheel for a torch-family requirement and this interpreter."""


class EnvironmentProbeError(InstallError):
    """The target Python could not be run or inspected."""


class BackendError(InstallError):
    """uv or pip failed."""
