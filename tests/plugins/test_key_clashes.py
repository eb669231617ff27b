"""Key clashes: first-party plugins keep their keys; plugins of the same
standing lose a shared key; the one first-party list serves the sweeps too."""

from __future__ import annotations

import pytest

from graphsval_core.builtin.ops import MATMUL
from graphsval_core.plugins import first_party
from graphsval_core.plugins.loader import build_registry
from graphsval_core.plugins.records import PredictorSpec
from graphsval_core.sweep import generator


@pytest.fixture
def install(fake_entry_points, make_entry_point, make_plugin, make_target):
    """Install toy plugins: ``(name, distribution, target keys, extra hooks)``."""

    def build(*plugins):
        eps = []
        for name, dist, keys, hooks in plugins:
            module = make_plugin(name, lambda keys=keys: [make_target(k) for k in keys], **hooks)
            eps.append(make_entry_point(name, lambda m=module: m, dist, "1.0"))
        fake_entry_points(*eps)
        return build_registry()

    return build


@pytest.mark.parametrize("third_party_first", [True, False])
def test_a_first_party_plugin_keeps_a_target_key(install, third_party_first):
    cpu = ("cpu", "graphsval-cpu", ["i7_12700k"], {})
    acme = ("acme", "acme-dist", ["i7_12700k", "acme_one"], {})
    registry = install(*([acme, cpu] if third_party_first else [cpu, acme]))
    assert registry.target_plugin("i7_12700k").name == "cpu"
    assert registry.target_plugin("acme_one").name == "acme"
    infos = registry.infos
    assert infos["cpu"].targets == ["i7_12700k"] and infos["cpu"].errors == []
    assert infos["acme"].loaded and infos["acme"].targets == ["acme_one"]
    names = "'acme' and 'cpu'" if third_party_first else "'cpu' and 'acme'"
    assert [str(p) for p in registry.problems] == [
        f"plugin 'acme' (acme-dist 1.0): target 'i7_12700k' is registered by {names}; "
        "first-party plugins take precedence, so the registration of 'acme' is dropped"
    ]


def test_the_core_keeps_its_ops_and_predictors(install):
    reference = PredictorSpec(name="reference", description="mine", predict=lambda *a: None)
    hooks = {
        "graphsval_register_ops": lambda: [MATMUL],
        "graphsval_register_predictors": lambda: [reference],
    }
    registry = install(("acme", "acme-dist", ["acme_one"], hooks))
    assert registry.predictor("reference") is not reference
    assert registry.infos["builtin_ops"].ops == ["matmul", "linear", "linear_nobias", "vector_add"]
    messages = registry.infos["acme"].errors
    assert len(messages) == 2
    assert messages[0].startswith("op 'matmul' is registered by 'builtin_ops' and 'acme'")
    assert messages[1].startswith("predictor 'reference' is registered by 'builtin_reference'")
    assert registry.infos["builtin_ops"].errors == []


def test_two_third_party_plugins_both_lose_a_shared_key(install):
    registry = install(
        ("acme", "acme-dist", ["shared", "acme_one"], {}),
        ("zeta", "zeta-dist", ["shared"], {}),
    )
    assert "shared" not in registry.targets()
    for name in ("acme", "zeta"):
        assert registry.infos[name].errors == [
            "target 'shared' is registered by 'acme' and 'zeta'; the key is withdrawn"
        ]


def test_two_first_party_plugins_both_lose_a_shared_key_and_a_third_party_too(install):
    registry = install(
        ("cpu", "graphsval-cpu", ["shared"], {}),
        ("cuda", "graphsval-cuda", ["shared"], {}),
        ("acme", "acme-dist", ["shared"], {}),
    )
    assert "shared" not in registry.targets()
    assert registry.infos["acme"].errors == [
        "target 'shared' is registered by 'cpu' and 'cuda' and 'acme'; first-party "
        "plugins take precedence, so the registration of 'acme' is dropped"
    ]
    assert registry.infos["cpu"].errors == [
        "target 'shared' is registered by 'cpu' and 'cuda'; the key is withdrawn"
    ]


def test_one_first_party_list_names_the_core_and_the_five_plugins():
    assert {
        "graphsval",
        "graphsval-cpu",
        "graphsval-cuda",
        "graphsval-jetson",
        "graphsval-kpu",
        "graphsval-tpu",
    } == first_party.FIRST_PARTY_DISTRIBUTIONS
    assert generator.FIRST_PARTY_DISTRIBUTIONS is first_party.FIRST_PARTY_DISTRIBUTIONS


def test_the_sweeps_label_inline_the_targets_of_first_party_plugins_only(install):
    registry = install(
        ("kpu", "graphsval-kpu", ["kpu_like"], {}),
        ("acme", "acme-dist", ["acme_one"], {}),
    )
    assert [t.key for t in generator.first_party_targets(registry)] == ["kpu_like"]


@pytest.mark.parametrize("third_party_first", [True, False])
def test_a_first_party_distribution_keeps_its_entry_point_name(
    fake_entry_points, make_entry_point, make_plugin, make_target, third_party_first
):
    """A third-party distribution that names its entry point ``kpu`` neither
    replaces graphsval-kpu nor vanishes silently, whatever the order."""
    real = make_plugin("kpu", lambda: [make_target("kpu_real")])
    evil = make_plugin("kpu", lambda: [make_target("evil_one")])
    eps = [
        make_entry_point("kpu", lambda: real, "graphsval-kpu", "0.1.0"),
        make_entry_point("kpu", lambda: evil, "graphsval-evil", "6.6.6"),
    ]
    fake_entry_points(*(reversed(eps) if third_party_first else eps))
    registry = build_registry()
    assert "kpu_real" in registry.targets() and "evil_one" not in registry.targets()
    assert registry.infos["kpu"].distribution == "graphsval-kpu"
    (problem,) = registry.problems
    assert "graphsval-kpu 0.1.0" in str(problem) and "graphsval-evil 6.6.6" in str(problem)
    assert "first-party plugin, takes precedence" in str(problem)
    loser = next(i for i in registry.plugins if i.distribution == "graphsval-evil")
    assert not loser.loaded and loser.errors


def test_two_third_parties_sharing_an_entry_point_name_both_lose_it(
    fake_entry_points, make_entry_point, make_plugin, make_target
):
    one = make_plugin("x", lambda: [make_target("one_t")])
    two = make_plugin("x", lambda: [make_target("two_t")])
    fake_entry_points(
        make_entry_point("x", lambda: one, "dist-one", "1"),
        make_entry_point("x", lambda: two, "dist-two", "2"),
    )
    registry = build_registry()
    assert not {"one_t", "two_t"} & set(registry.targets())
    assert len(registry.problems) == 2
    assert all("neither is loaded" in str(p) for p in registry.problems)


@pytest.mark.parametrize(
    "name", ["builtin_defaults", "builtin_ops", "builtin_reference", "builtin_checks", "workspace"]
)
def test_a_third_party_named_like_a_built_in_is_not_loaded(
    fake_entry_points, make_entry_point, make_plugin, make_target, name
):
    """An entry point named ``builtin_defaults`` took the built-in's record
    (the core's defaults were then refused as another plugin's answers, and
    every command failed); ``builtin_ops`` hid every op. The built-in keeps
    its name and the third party is named as not loaded."""
    evil = make_plugin(name, lambda: [make_target("evil_one")])
    good = make_plugin("good", lambda: [make_target("good_one")])
    fake_entry_points(
        make_entry_point(name, lambda: evil, "graphsval-evil", "6.6.6"),
        make_entry_point("good", lambda: good, "graphsval-good", "1.0"),
    )
    registry = build_registry()
    assert "evil_one" not in registry.targets()
    assert {"matmul", "linear", "vector_add"} <= set(registry.ops())
    if name != "workspace":
        assert registry.infos[name].builtin and registry.infos[name].loaded
    (problem,) = registry.problems
    assert f"entry point name {name!r} is a built-in plugin's: not loaded" in str(problem)
    target = registry.target("good_one")
    assert registry.memory_hierarchy(target) == target.tiers  # the core's default answers
