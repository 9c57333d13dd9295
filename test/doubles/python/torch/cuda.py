"""TEST DOUBLE of torch.cuda. See ../README.md."""


def is_available():
    return True


def current_device():
    return 0
