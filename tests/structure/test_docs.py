"""README is read in five minutes and leads to every page of the guide; no link is broken."""

from __future__ import annotations

import re

from conftest import ROOT

LINK = re.compile(r"\]\(([^)#]+)(#[^)]*)?\)")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "tests" / "README.md"]


def test_readme_is_short_and_links_every_page_of_the_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    linked = {(ROOT / target).resolve() for target, _ in LINK.findall(readme)}
    docs = set((ROOT / "docs").rglob("*.md")) | {ROOT / "tests" / "README.md"}
    assert {p.resolve() for p in docs} <= linked, sorted(str(p) for p in docs - linked)


def test_every_relative_link_of_the_docs_resolves() -> None:
    broken = [
        f"{page.relative_to(ROOT)} -> {target}"
        for page in PAGES
        for target, _ in LINK.findall(page.read_text())
        if not target.startswith(("http://", "https://"))
        and not (page.parent / target).resolve().exists()
    ]
    assert not broken
