"""The one error a user fixes in params.yaml (kept apart so torch-free grid modules can raise it)."""


class ParamsError(ValueError):
    """params are invalid; the message names each bad key, its value and what is allowed."""
