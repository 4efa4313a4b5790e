"""What the browser tests do without a browser: skip with the fix locally, fail in CI
(`tests/browser.py`)."""

from __future__ import annotations

import pytest

from tests import browser as support


@pytest.fixture
def no_chromium(monkeypatch, tmp_path):
    monkeypatch.setattr(support, "CHROMIUM", tmp_path / "no-such-chromium")


def test_without_chromium_the_browser_tests_skip_and_say_how_to_install_it(no_chromium):
    with pytest.raises(pytest.skip.Exception, match=r"sudo apt-get install chromium"):
        support.require_browser(in_ci=False)


def test_in_ci_a_missing_chromium_is_a_failure(no_chromium):
    with pytest.raises(pytest.fail.Exception, match=r"CI=true and .*apt-get install chromium"):
        support.require_browser(in_ci=True)


def test_with_chromium_the_browser_is_debians(monkeypatch, tmp_path):
    fake = tmp_path / "chromium"
    fake.write_text("")
    monkeypatch.setattr(support, "CHROMIUM", fake)
    assert support.require_browser(in_ci=True) == fake
    assert "--no-sandbox" in support.CHROMIUM_FLAGS
    assert "--disable-quic" in support.CHROMIUM_FLAGS
