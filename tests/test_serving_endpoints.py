"""Endpoints as an operator configures them and as a user types them: hostile values refused in words before any
request, keys never shown, typed URLs refused on a shared server unless they are the operator's."""

from __future__ import annotations

import os

import pytest

from explorer.core.errors import ExplorerError
from explorer.serving import endpoints
from explorer.serving.endpoints import Endpoint

BAD_URLS = ["", "   ", "localhost:8000", "ftp://x/v1", "javascript:alert(1)", "http://", "http://a b/v1",
            "http://x:99999/v1", "http://u:p@x/v1", "http://x/v1?q=1", "<script>alert(1)</script>",
            "http://" + "a" * 600, "http://x/\u202ev1\x00"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_url_is_refused_in_one_sentence(url: str) -> None:
    with pytest.raises(ExplorerError) as err:
        endpoints.parse_url(url)
    assert len(str(err.value)) < 300 and "\n" not in str(err.value)


@pytest.mark.parametrize(("url", "base"), [("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
                                           ("http://LOCALHOST:8000/v1/", "http://localhost:8000/v1"),
                                           ("https://gpu.example.org/openai/v1", "https://gpu.example.org/openai/v1")])
def test_a_base_url_is_normalised(url: str, base: str) -> None:
    assert endpoints.parse_url(url) == base


def test_the_environment_and_a_toml_file_give_the_operators_list(tmp_path) -> None:
    file = tmp_path / "endpoints.toml"
    file.write_text('[[endpoint]]\nname = "big"\nbase_url = "http://10.0.0.5:8000/v1"\n'
                    'model = "meta-llama/Llama-3.1-70B"\n'
                    'api_key_env = "BIG_KEY"\nlabel = "Llama 70B on vLLM"\ntimeout = 120\nmax_concurrent = 16\n')
    env = {"EXPLORER_ENDPOINT_URL": "http://127.0.0.1:8080", "EXPLORER_ENDPOINT_NAME": "gemma",
           "EXPLORER_ENDPOINTS_FILE": str(file), "BIG_KEY": "sk-secret"}
    small, big = endpoints.configured(env)
    assert (small.key, small.base_url, small.model) == ("served:gemma", "http://127.0.0.1:8080/v1", "")
    assert (big.name, big.model, big.timeout, big.max_concurrent, big.shown) == \
        ("big", "meta-llama/Llama-3.1-70B", 120.0, 16, "Llama 70B on vLLM")
    assert "sk-secret" not in repr(big) and "sk-secret" not in str(big.to_dict())  # the key stays in its variable
    assert endpoints.find("big", env=env) == big


@pytest.mark.parametrize("body", ['[[endpoint]]\nname = "a b"\nbase_url = "http://x/v1"\n',
                                  '[[endpoint]]\nname = "a"\nbase_url = "nope"\n',
                                  '[[endpoint]]\nname = "a"\nbase_url = "http://x/v1"\napi_key_env = "sk-123 456"\n',
                                  '[[endpoint]]\nname = "a"\nbase_url = "http://x/v1"\ntimeout = -1\n',
                                  '[[endpoint]]\nname = "a"\nbase_url = "http://x/v1"\n'
                                  '[[endpoint]]\nname = "a"\nbase_url = "http://y/v1"\n',
                                  "endpoint = 3", "not [toml", "\xff\xfe"])
def test_a_broken_endpoints_file_is_one_message(tmp_path, body: str) -> None:
    file = tmp_path / "endpoints.toml"
    file.write_bytes(body.encode("latin-1") if body == "\xff\xfe" else body.encode())
    with pytest.raises(ExplorerError) as err:
        endpoints.configured({"EXPLORER_ENDPOINTS_FILE": str(file)})
    assert "\n" not in str(err.value)


def test_an_unknown_name_lists_the_known_ones() -> None:
    env = {"EXPLORER_ENDPOINT_URL": "http://127.0.0.1:8080", "EXPLORER_ENDPOINT_NAME": "gemma"}
    with pytest.raises(ExplorerError, match=r"'nope' \(gemma\)"):
        endpoints.find("nope", env=env)


def test_a_shared_server_only_calls_the_operators_urls(monkeypatch) -> None:
    env = {"EXPLORER_ENDPOINT_URL": "http://127.0.0.1:8080/v1", "EXPLORER_ENDPOINT_NAME": "gemma",
           "EXPLORER_ENDPOINT_KEY_ENV": "GEMMA_KEY"}
    assert endpoints.typed("mine", "http://169.254.169.254/v1", env=env).source == "typed"  # a private machine
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "1")  # `make run ADDRESS=0.0.0.0`
    with pytest.raises(ExplorerError, match="only calls the endpoints its operator configured"):
        endpoints.typed("mine", "http://169.254.169.254/v1", env=env)
    ok = endpoints.typed("mine", "http://127.0.0.1:8080", env=env)
    assert ok.base_url == "http://127.0.0.1:8080/v1" and ok.api_key_env == "GEMMA_KEY"


def test_the_key_is_read_at_request_time_and_never_held(monkeypatch) -> None:
    ep = Endpoint("k", "http://127.0.0.1:1/v1", api_key_env="SOME_KEY")
    assert ep.api_key() is None
    monkeypatch.setenv("SOME_KEY", "sk-live")
    assert ep.api_key() == "sk-live" and "sk-live" not in repr(ep)


def _refused(env: dict[str, str]) -> str:
    with pytest.raises(ExplorerError) as err:
        endpoints.configured(env)
    said = str(err.value)
    assert "\n" not in said and len(said) < 400
    return said


def test_an_endpoints_file_is_read_as_every_user_file_is(tmp_path) -> None:
    nested = tmp_path / "nested.toml"
    nested.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")  # tomllib recurses once per level
    assert "nested too deep" in _refused({"EXPLORER_ENDPOINTS_FILE": str(nested)})
    assert "character device" in _refused({"EXPLORER_ENDPOINTS_FILE": "/dev/zero"})  # refused before any read
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: an open would block forever
    assert "named pipe" in _refused({"EXPLORER_ENDPOINTS_FILE": str(fifo)})
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * endpoints.MAX_FILE_BYTES + "\n")
    assert f"larger than {endpoints.MAX_FILE_BYTES:,} bytes" in _refused({"EXPLORER_ENDPOINTS_FILE": str(big)})


def test_the_number_of_endpoints_is_bounded(tmp_path) -> None:
    many = tmp_path / "many.toml"
    many.write_text("".join(f'[[endpoint]]\nname = "e{i}"\nbase_url = "http://127.0.0.1:{1024 + i}/v1"\n'
                            for i in range(endpoints.MAX_ENDPOINTS + 1)))
    assert f"lists {endpoints.MAX_ENDPOINTS + 1} endpoints; at most {endpoints.MAX_ENDPOINTS}" in \
        _refused({"EXPLORER_ENDPOINTS_FILE": str(many)})
    ten_thousand = tmp_path / "ten-thousand.toml"  # about 600 KB: refused by its size before it is parsed
    ten_thousand.write_text("".join(f'[[endpoint]]\nname = "e{i}"\nbase_url = "http://127.0.0.1:{1024 + i}/v1"\n'
                                    for i in range(10_000)))
    assert "larger than" in _refused({"EXPLORER_ENDPOINTS_FILE": str(ten_thousand)})


KEYED = ["http://127.0.0.1:8080/v1?api_key=sk-SECRET-0123456789", "http://127.0.0.1:8080/v1?key=SECRET0123456789",
         "http://admin:SECRET0123456789@127.0.0.1:8080/v1", "http://:SECRET0123456789@127.0.0.1:8080/v1",
         "http://127.0.0.1:8080/v1#token=SECRET0123456789", "http://127.0.0.1:8080/v1;key=SECRET0123456789",
         "http://127.0.0.1:8080/keys/sk-SECRET0123456789/v1", "http://127.0.0.1:8080/v1/token=SECRET0123456789",
         "http://127.0.0.1:8080/v1/SECRET0123456789abcdefghijkLMNOPQRS"]


@pytest.mark.parametrize("url", KEYED)
def test_a_url_carrying_a_key_is_refused_without_quoting_the_key(tmp_path, url: str) -> None:
    assert "SECRET" not in _refused({"EXPLORER_ENDPOINT_URL": url})
    file = tmp_path / "endpoints.toml"
    file.write_text(f'[[endpoint]]\nname = "k"\nbase_url = "{url}"\n')
    assert "SECRET" not in _refused({"EXPLORER_ENDPOINTS_FILE": str(file)})
    with pytest.raises(ExplorerError) as err:
        endpoints.typed("k", url)
    assert "SECRET" not in str(err.value)
