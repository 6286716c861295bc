"""The main chat's file changes: how they reach the files (``applier``) and the tools that make them (``tools``)."""

from ...agent.services import FeatureModule, Services
from .feature import EditsFeature


def setup(services: Services) -> EditsFeature:
    return EditsFeature(
        services.root,
        settings=lambda: services.settings,
        ask=services.ask,
        warning=lambda message: services.listeners.warning(message),
        model=services.model_client,
        switch_mode=services.switch_approval_mode,
    )


FEATURE = FeatureModule(
    "edits",
    setup,
    doc="write_file, edit, run_shell_command and exit_plan_mode by approval mode; who approves; plan and auto modes",
)
