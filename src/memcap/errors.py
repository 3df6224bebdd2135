"""The errors a user fixes in params.yaml, with a message and no traceback (kept apart so torch-free
grid modules can raise them)."""


class TrainingFailed(RuntimeError):
    """A run ended no better than its initialisation (no finite loss, or never below the step-0 loss):
    an error, never a result. The message names the runs and the settings to look at."""


class ParamsError(ValueError):
    """params are invalid; the message names each bad key, its value and what is allowed."""
