"""Per-trial state for the mcp-git suite: a small Git repository built in each trial_dir.

Every name, e-mail and date is fixed (and no user or system Git configuration is read), so
every trial starts from the same commits with the same hashes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DANA = ("Dana Whitfield", "dana@example.com")
RAVI = ("Ravi Menon", "ravi@example.com")

# Seconds since the epoch (UTC): 2024-03-01 09:00, 03-04 10:30, 03-07 15:45, 03-08 11:20.
DAY1, DAY2, DAY3, DAY4 = 1709283600, 1709548200, 1709826300, 1709896800

CLEAN_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}

README = """# fetchkit

A tiny HTTP fetch helper with retries.
"""

APP_V1 = '''"""fetchkit: fetch a URL with retries."""

MAX_RETRIES = 3


def fetch(url: str) -> str:
    return f"GET {url}"
'''

APP_V2 = '''"""fetchkit: fetch a URL with retries."""

import time

MAX_RETRIES = 3


def fetch(url: str) -> str:
    for attempt in range(MAX_RETRIES):
        if attempt:
            time.sleep(2**attempt)  # exponential backoff
    return f"GET {url}"
'''

CONFIG_V1 = "request:\n  timeout: 30\n  retries: 3\n"
CONFIG_V2 = "request:\n  timeout: 60\n  retries: 3\n"

PARSER = '''"""Streaming parser (experimental)."""


def parse(chunks: list[str]) -> str:
    return "".join(chunks)
'''


def git(repo: Path, *args: str, who: tuple[str, str] = DANA, when: int = DAY1) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **CLEAN_ENV,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
        "GIT_AUTHOR_DATE": f"{when} +0000",
        "GIT_COMMITTER_DATE": f"{when} +0000",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def write(repo: Path, name: str, text: str) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build_repo(repo: Path) -> None:
    """main: three commits; release-1.0 at the second; experiment one past main. Then a
    staged new file, an unstaged edit and an untracked file in the working tree."""
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "config", "user.name", "Sam Carter")
    git(repo, "config", "user.email", "sam@example.com")
    git(repo, "config", "commit.gpgsign", "false")
    write(repo, "README.md", README)
    write(repo, "app.py", APP_V1)
    write(repo, "config.yaml", CONFIG_V1)
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "Initial commit: app skeleton", when=DAY1)
    write(repo, "app.py", APP_V2)
    git(repo, "commit", "--quiet", "-am", "Add retry backoff to fetch", who=RAVI, when=DAY2)
    git(repo, "branch", "release-1.0")
    write(repo, "config.yaml", CONFIG_V2)
    git(repo, "commit", "--quiet", "-am", "Raise request timeout to 60s", when=DAY3)
    git(repo, "checkout", "--quiet", "-b", "experiment")
    write(repo, "parser.py", PARSER)
    git(repo, "add", "parser.py")
    git(repo, "commit", "--quiet", "-m", "Try a streaming parser", who=RAVI, when=DAY4)
    git(repo, "checkout", "--quiet", "main")
    write(repo, "docs/CHANGELOG.md", "## 1.1\n\n- Retry backoff\n- Longer timeout\n")
    git(repo, "add", "docs/CHANGELOG.md")
    write(repo, "app.py", APP_V2.replace("MAX_RETRIES = 3", "MAX_RETRIES = 5"))
    write(repo, "TODO.md", "- add jitter to the backoff\n")


def setup(trial_dir: Path) -> None:
    """The setup hook: the repository at trial_dir/repo."""
    build_repo(trial_dir / "repo")
