"""``requirements.txt`` pins the app's whole dependency tree, as installed here, in the file itself.

The lines above :data:`LOCK_HEADER` are the packages LawLuo uses; the lines below it pin every other
package those need, at the version installed together with them (``importlib.metadata``: each
distribution's ``Requires-Dist``, markers evaluated for this Linux/Python 3.11 machine, the Docker
image's and a Space's platform). Pins in the file, not ``-c constraints.txt`` beside it: a Space builds
with ``RUN --mount=target=/tmp/requirements.txt,source=requirements.txt pip install -r
/tmp/requirements.txt …`` — the file alone, so a constraints file it names is not there and the build
fails. After upgrading a package (``pip install -r requirements-dev.txt`` with a new pin above the
line), rewrite the section::

    python -m tests.test_requirements_lock --write

Reference: pip's requirements file format (``-c``, nested files relative to the file); PEP 508
(markers), PEP 440 (local version labels: ``torch==2.13.0`` matches the CPU build ``2.13.0+cpu``).
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements.txt"
LOCK_HEADER = (
    "# ==== The rest of the dependency tree, pinned (python -m tests.test_requirements_lock --write) ===="
)
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][^\s;#+]*)$")
DEPLOYED = sys.platform == "linux" and sys.version_info[:2] == (3, 11)  # the Docker image's, a Space's


def sections(text: str) -> tuple[list[str], list[str]]:
    """The requirement lines above and below :data:`LOCK_HEADER` (comments and blank lines dropped)."""
    above, _, below = text.partition(LOCK_HEADER + "\n")

    def lines(part: str) -> list[str]:
        return [line.split("#", 1)[0].strip() for line in part.splitlines() if line.split("#", 1)[0].strip()]

    return lines(above), lines(below)


def tree(roots: list[str]) -> dict[str, str]:
    """Canonical name → installed version (public part: ``2.13.0+cpu`` → ``2.13.0``) of ``roots`` and
    everything they require here, extras followed."""
    env = default_environment()
    found: dict[str, tuple[str, set[str]]] = {}
    todo = [Requirement(line) for line in roots]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        known = found.get(name)
        if known is not None and set(req.extras) <= known[1]:
            continue
        try:
            dist = distribution(req.name)
        except PackageNotFoundError:
            raise AssertionError(f"{req} is required but not installed here") from None
        extras = set(req.extras) | (known[1] if known else set())
        found[name] = (Version(dist.version).public, extras)
        for spec in dist.requires or []:
            sub = Requirement(spec)
            if sub.marker is None or any(sub.marker.evaluate({**env, "extra": e}) for e in extras | {""}):
                todo.append(sub)
    return {name: version for name, (version, _) in found.items()}


def lock_section(text: str) -> str:
    """The section below :data:`LOCK_HEADER` for the packages above it, as installed here."""
    direct, _ = sections(text)
    names = {canonicalize_name(Requirement(line).name) for line in direct}
    return "".join(
        f"{name}=={version}\n" for name, version in sorted(tree(direct).items()) if name not in names
    )


def pins(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        match = PIN.match(line)
        assert match, f"{line!r} is not an exact pin name==version (a Space installs this file alone)"
        out[canonicalize_name(match[1])] = match[2]
    return out


@pytest.fixture(scope="module")
def text() -> str:
    return REQUIREMENTS.read_text(encoding="utf-8")


def test_the_file_stands_alone_with_exact_pins(text):
    """A Space mounts requirements.txt alone: no other file, option or path it could not resolve."""
    direct, locked = sections(text)
    assert locked, f"requirements.txt has no section under {LOCK_HEADER!r}"
    assert not [line for line in direct + locked if line.startswith("-") or "/" in line or "@" in line]
    both = pins(direct).keys() & pins(locked).keys()
    assert not both, f"pinned twice: {both}"
    assert pins(direct)["torch"] == "2.13.0"  # no +cpu: Docker's CPU index and a Space's PyPI both satisfy it


@pytest.mark.skipif(not DEPLOYED, reason="the lock is for Linux and Python 3.11 (Docker, Spaces)")
def test_the_whole_tree_is_pinned_at_the_installed_versions(text):
    direct, locked = sections(text)
    expected = tree(direct)
    pinned = pins(direct) | pins(locked)
    assert sorted(expected.keys() - pinned.keys()) == [], (
        "unpinned: python -m tests.test_requirements_lock --write"
    )
    assert sorted(pinned.keys() - expected.keys()) == [], "pinned but not needed: rewrite the section"
    assert {n: v for n, v in pinned.items() if v != expected[n]} == {}, "pins differ from what is installed"
    assert text.partition(LOCK_HEADER + "\n")[2].strip() == lock_section(text).strip()  # sorted, as written


def test_the_pins_satisfy_each_other(text):
    """What ``pip check`` asks of an environment, asked of the pinned versions (from their metadata)."""
    direct, locked = sections(text)
    pinned = pins(direct) | pins(locked)
    env = default_environment()
    conflicts = []
    for name, version in pinned.items():
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue  # not installed here: test_the_whole_tree_… says so on the deployed platform
        if Version(dist.version).public != version:
            continue  # another version's metadata says nothing of the pin's (test_the_whole_tree_… fails)
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate({**env, "extra": ""}):
                continue
            dep = canonicalize_name(req.name)
            if dep in pinned and not req.specifier.contains(pinned[dep], prereleases=True):
                conflicts.append(f"{name}=={version} needs {req}, pinned {dep}=={pinned[dep]}")
    assert conflicts == []


#: The extras of gradio a Space's builder installs in the same pip command (``gradio[oauth,mcp]``).
SPACE_EXTRAS = ("oauth", "mcp")


def test_the_gradio_extras_a_space_adds_accept_the_pins(text):
    """A Space installs ``gradio[oauth,mcp]==<sdk_version>`` with this file: a pin its extras refuse stops
    the build (pydantic 2.13.4 did: gradio 6.31's mcp extra requires pydantic<=2.12.5)."""
    direct, locked = sections(text)
    pinned = pins(direct) | pins(locked)
    refused = []
    for spec in distribution("gradio").requires or []:
        req = Requirement(spec)
        extra = [e for e in SPACE_EXTRAS if req.marker is not None and req.marker.evaluate({"extra": e})]
        dep = canonicalize_name(req.name)
        if extra and dep in pinned and not req.specifier.contains(pinned[dep], prereleases=True):
            refused.append(f"gradio[{extra[0]}] needs {req.name}{req.specifier}, pinned {pinned[dep]}")
    assert refused == []


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.test_requirements_lock --write   (rewrites requirements.txt's lock)")
    current = REQUIREMENTS.read_text(encoding="utf-8")
    above = current.partition(LOCK_HEADER + "\n")[0].rstrip("\n") + "\n\n"
    REQUIREMENTS.write_text(above + LOCK_HEADER + "\n" + lock_section(current), encoding="utf-8")
    print(f"{REQUIREMENTS.name}: {len(sections(REQUIREMENTS.read_text())[1])} pins under the line")
