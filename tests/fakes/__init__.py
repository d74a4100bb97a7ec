"""Test doubles for services the app talks to (see :mod:`tests.fakes.openai_server`)."""
