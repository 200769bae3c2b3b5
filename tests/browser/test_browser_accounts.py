"""Optional accounts in Chromium: sign up on a phone, create a table and sit, log in on a
second browser (another context: its own cookies and storage), open the table there → the seat is
resumed there; the log-in page announces its errors; the pages in Italian. Screenshots of the
log-in and sign-up pages on a 390×844 phone go to test-artifacts/."""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import ENGLISH_WORDS, axe_violations, language_context, open_menu, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

PASSWORD = "correct horse 9"


def fill_and_send(page: Any, name: str, password: str) -> None:
    page.fill("#account-name", name)
    page.fill("#account-password", password)
    page.click("#account-submit")


def no_overflow(page: Any) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_sign_up_sit_then_the_seat_follows_the_account_to_another_browser(server: str, browser: Any,
                                                                          artifacts: Path) -> None:
    name = f"Ann {secrets.token_hex(3)}"
    phone = language_context(browser, "en", 390, 844)
    laptop = language_context(browser, "en", 1280, 800)
    try:
        page = phone.new_page()
        errors = watch_errors(page)
        page.goto(f"{server}/")
        open_menu(page)  # (on a phone the header's links are in its menu)
        page.click("#login-link")  # the header's "Log in"
        page.wait_for_url(re.compile(r"/login\?next="))
        page.click("#account-other")  # "No account yet? Sign up"
        page.wait_for_url(re.compile(r"/signup"))
        page.wait_for_selector("#account-title:has-text('Create an account')")
        page.screenshot(path=str(artifacts / "accounts-signup-phone-en.png"), full_page=True)
        no_overflow(page)
        assert axe_violations(page) == []
        fill_and_send(page, name, PASSWORD)
        page.wait_for_url(f"{server}/")
        page.wait_for_selector(f"#account-name:has-text('{name}')", state="attached")
        open_menu(page)
        assert page.locator("#logout").is_visible()

        # a table from the lobby's form (a POST through api(): it carries the CSRF token), seat 1 taken
        page.wait_for_selector("#game option", state="attached")
        page.click("#create-btn")
        page.wait_for_url(re.compile(r"/t/\w+"))
        table = page.url.rsplit("/", 1)[1]
        page.wait_for_function("() => window.ludoteca.msg && window.ludoteca.msg.you === 0")
        assert page.locator(".seat[data-seat='0'] .name").inner_text().startswith(name)

        other = laptop.new_page()
        other_errors = watch_errors(other)
        other.goto(f"{server}/t/{table}")
        other.wait_for_function("() => window.ludoteca.msg !== null")
        assert other.evaluate("() => window.ludoteca.msg.you") is None  # not logged in: a spectator
        other.click("#login-link")
        other.wait_for_url(re.compile(r"/login\?next="))
        fill_and_send(other, name.upper(), PASSWORD)  # names are not case-sensitive
        other.wait_for_url(f"{server}/t/{table}")
        other.wait_for_function("() => window.ludoteca.msg && window.ludoteca.msg.you === 0")
        assert other.evaluate(f"() => JSON.parse(localStorage.getItem('ludoteca.seat.{table}')).seat") == 0
        # the phone's connection watches from now on (its token was replaced)
        page.wait_for_function("() => window.ludoteca.msg && window.ludoteca.msg.you === null")
        other.screenshot(path=str(artifacts / "accounts-seat-resumed-desktop-en.png"))
        assert errors == [] and other_errors == []
    finally:
        phone.close()
        laptop.close()


def test_the_log_in_page_announces_its_errors(server: str, browser: Any, artifacts: Path) -> None:
    ctx = language_context(browser, "en", 390, 844)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(f"{server}/login")
        page.wait_for_selector("#account-title:has-text('Log in')")
        assert page.locator("label[for='account-name']").inner_text() == "Account name"
        assert page.locator("#account-error").get_attribute("role") == "alert"
        page.click("#account-submit")  # nothing typed: told in the page, nothing sent
        assert page.locator("#account-error").inner_text() == "Type your account name."
        assert page.locator("#account-name").get_attribute("aria-invalid") == "true"
        fill_and_send(page, f"nobody{secrets.token_hex(3)}", "not the password")
        page.wait_for_selector("#account-error:has-text('wrong account name or password')")
        assert page.locator("#account-password").get_attribute("aria-invalid") == "true"
        page.screenshot(path=str(artifacts / "accounts-login-error-phone-en.png"), full_page=True)
        no_overflow(page)
        assert axe_violations(page) == []
        assert errors == []
    finally:
        ctx.close()


def test_the_account_pages_in_italian(server: str, browser: Any, artifacts: Path) -> None:
    ctx = language_context(browser, "it", 390, 844)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(f"{server}/login")
        page.wait_for_selector("#account-title:has-text('Accedi')")
        assert page.locator("label[for='account-name']").inner_text() == "Nome dell’account"
        assert page.locator("label[for='account-password']").inner_text() == "Password"
        page.screenshot(path=str(artifacts / "accounts-login-phone-it.png"), full_page=True)
        page.goto(f"{server}/signup")
        page.wait_for_selector("#account-title:has-text('Crea un account')")
        fill_and_send(page, "ab", PASSWORD)
        assert page.locator("#account-error").inner_text() == "Un nome di account ha da 3 a 32 caratteri."
        page.screenshot(path=str(artifacts / "accounts-signup-phone-it.png"), full_page=True)
        text = page.locator("body").inner_text() + " " + page.title()
        words = set(re.findall(r"[a-zA-Z]+", text.replace("ludoteca", "")))
        assert not words & set(ENGLISH_WORDS), words & set(ENGLISH_WORDS)
        # a name taken: the server's message in Italian
        name = f"Bea{secrets.token_hex(3)}"
        fill_and_send(page, name, PASSWORD)
        page.wait_for_url(f"{server}/")
        page.wait_for_selector("#logout:has-text('Esci')", state="attached")
        open_menu(page)
        page.click("#logout")
        page.wait_for_selector("#login-link:has-text('Accedi')", state="attached")
        page.goto(f"{server}/signup")
        fill_and_send(page, name.lower(), PASSWORD)
        page.wait_for_selector(f"#account-error:has-text('il nome {name.lower()} è già preso')")
        assert errors == []
    finally:
        ctx.close()
