"""Guards around plugins' hook implementations, put in place at registration.

:class:`GuardedPluginManager` is a :class:`pluggy.PluginManager` that, when a
plugin is registered, replaces the function of each of its hook
implementations by a :class:`Guard` with the same call signature, so pluggy's
own call loop (``pm.hook.<name>(**kwargs)``, with its ordering, ``firstresult``,
wrappers and tracing) stays in charge, while:

- an implementation that raises (any :class:`Exception`, :class:`SystemExit`,
  or a :class:`KeyboardInterrupt` that is no Ctrl-C of the user's: see
  :mod:`graphsval_core.plugins.interrupts`) or answers something its spec
  does not promise (see
  :mod:`graphsval_core.plugins.answers`) gives no answer (None): the failure is
  handed to the manager's failure handler, and a first-result hook moves on
  to the next implementation;
- a collecting hook's iterable answer is materialised inside the guard into a
  fresh list, and each answer is noted against the plugin that gave it in the
  manager's :class:`~graphsval_core.plugins.calls.CallLog`;
- a wrapper (``wrapper=True``, or old-style ``hookwrapper=True``) sees, and
  may replace, the result as pluggy defines; an exception of an inner
  implementation reaches it as pluggy defines; a wrapper that raises before
  or after its ``yield`` (or does not yield once), or replaces the result by
  a malformed one, has its failure handed over and then acts as a
  transparent wrapper (the result or exception passes through unchanged).

The failure handler may raise (strict mode); what it raises propagates
through pluggy's call loop like any exception of an implementation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Mapping
from typing import Any, Protocol

import pluggy

from graphsval_core.plugins.answers import check_answer, materialise
from graphsval_core.plugins.calls import CallLog
from graphsval_core.plugins.interrupts import is_plugin_fault

#: Hooks whose answer shapes a target's model: only the plugin that registers
#: the target (or the core's built-in defaults) may answer them for it.
OWN_TARGET_HOOKS = frozenset({"graphsval_memory_hierarchy", "graphsval_residency_window"})

#: A wrapper's generator, paused at its ``yield``.
Teardown = Generator[Any, Any, Any]


class FailureHandler(Protocol):
    """Told of each failure: the plugin, the hook, the error, and whether the
    error is a malformed answer (a :class:`TypeError` naming the hook) rather
    than one the plugin raised."""

    def __call__(self, plugin: str, hook: str, error: BaseException, malformed: bool) -> None: ...


class _Malformed(Exception):
    """A malformed answer; ``error`` is the :class:`TypeError` that names the
    hook, what it returned and what was expected."""

    def __init__(self, error: TypeError) -> None:
        super().__init__(str(error))
        self.error = error


class Guard:
    """A hook implementation's function behind its guard.

    Calling it calls the guarded body; :attr:`original` is the plugin's own
    function (``inspect.signature`` reports the original's signature).
    """

    def __init__(self, original: Callable[..., Any], body: Callable[..., Any]) -> None:
        functools.update_wrapper(self, original)
        self.original = original
        self._body = body

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._body(*args, **kwargs)


def original_function(impl: pluggy.HookImpl) -> Callable[..., Any]:
    """The plugin's own function of a hook implementation, without its guard."""
    function = impl.function
    return function.original if isinstance(function, Guard) else function


class GuardedPluginManager(pluggy.PluginManager):
    """A plugin manager whose registered hook implementations are guarded.

    :param on_failure: told of every failure of a guarded implementation.
    """

    def __init__(self, project_name: str, on_failure: FailureHandler) -> None:
        super().__init__(project_name)
        self.calls = CallLog()
        self.add_hookcall_monitoring(self.calls.before, self.calls.after)
        self._on_failure = on_failure
        #: ``(plugin, target key) -> bool``: whether the plugin may shape the
        #: model of that target (:data:`OWN_TARGET_HOOKS`); None: any may
        self.may_shape: Callable[[str, str], bool] | None = None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin`` as pluggy does, then guard each of its implementations."""
        plugin_name = super().register(plugin, name)
        if plugin_name is None:
            return None
        for caller in self.get_hookcallers(plugin) or []:
            firstresult = bool(caller.spec and caller.spec.opts.get("firstresult"))
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and not isinstance(impl.function, Guard):
                    body = _Guarded(
                        impl, caller.name, firstresult, self.calls, self._on_failure, self
                    )
                    impl.function = Guard(impl.function, body.build())  # type: ignore[misc]
        return plugin_name


class _Guarded:
    """The guarded body of one hook implementation."""

    def __init__(
        self,
        impl: pluggy.HookImpl,
        hook: str,
        firstresult: bool,
        calls: CallLog,
        on_failure: FailureHandler,
        manager: GuardedPluginManager | None = None,
    ) -> None:
        self.manager = manager
        self.function = impl.function
        self.argnames = impl.argnames
        self.plugin = impl.plugin_name
        self.hook = hook
        self.firstresult = firstresult
        self.calls = calls
        self.on_failure = on_failure
        self.old_style = bool(impl.hookwrapper)
        self.wrapper = bool(impl.wrapper)

    def build(self) -> Callable[..., Any]:
        if self.old_style:
            return self.old_style_wrapper
        if self.wrapper:
            return self.new_style_wrapper
        return self.plain

    # --- shared -----------------------------------------------------------------

    def fail(self, error: BaseException) -> None:
        """Hand a failure over: a malformed answer, or an error the plugin raised."""
        if isinstance(error, _Malformed):
            self.on_failure(self.plugin, self.hook, error.error, True)
        else:
            self.on_failure(self.plugin, self.hook, error, False)

    def malformed(self, message: str) -> _Malformed:
        return _Malformed(TypeError(f"{self.hook} {message}"))

    def call_kwargs(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Mapping[str, Any]:
        """The hook call's keyword arguments (those this implementation takes,
        when it is called outside pluggy's call loop)."""
        call = self.calls.current(self.hook)
        if call is not None:
            return call.kwargs
        return {**dict(zip(self.argnames, args, strict=False)), **kwargs}

    def checked(self, value: Any, call: Mapping[str, Any]) -> None:
        """Raise :class:`_Malformed` for a malformed answer (even one that breaks
        the check itself), or one for a target the plugin may not shape
        (:meth:`owns`)."""
        try:
            check_answer(self.hook, value, call)
        except TypeError as exc:
            raise _Malformed(exc) from None
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            raise self.malformed(
                f"returned {type(value).__name__}, which cannot be checked: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if value is not None:  # a wrapper's answer too is held to the owner rule
            self.owns(call)

    def note(self, answer: Any) -> None:
        if not self.firstresult:
            self.calls.note(self.hook, self.plugin, answer)

    def start(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Teardown | None:
        """Run a wrapper to its ``yield``; None (failure handed over) if it fails."""
        try:
            teardown = self.function(*args, **kwargs)
            next(teardown)
        except StopIteration:
            self.fail(self.malformed("wrapper did not yield"))
            return None
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            self.fail(exc)
            return None
        return teardown

    def replacement(self, value: Any, result: Any, before: Any, call: Mapping[str, Any]) -> Any:
        """A wrapper's result ``value`` after the checks (raises
        :class:`_Malformed` for a malformed one), given the ``result`` it was
        sent and ``before``, a copy of that result's answers; answers it adds
        to a collecting hook's list are noted against it."""
        if self.firstresult:
            if value is not result:
                self.checked(value, call)
            return value
        if not isinstance(value, list):
            raise self.malformed(
                f"wrapper returned {type(value).__name__}, expected a list of answers"
            )
        known = before if isinstance(before, list) else []
        out, added = [], []
        for answer in value:
            if answer is None:
                continue
            if not any(answer is old for old in known):
                answer = materialise(self.hook, answer)
                self.checked(answer, call)
                added.append(answer)
            out.append(answer)
        for answer in added:
            self.note(answer)
        return out

    # --- plain implementations --------------------------------------------------

    def plain(self, *args: Any, **kwargs: Any) -> Any:
        try:
            value = materialise(self.hook, self.function(*args, **kwargs))
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            self.fail(exc)
            return None
        try:
            self.checked(value, self.call_kwargs(args, kwargs))
        except _Malformed as exc:
            self.fail(exc)
            return None
        if value is not None:
            self.note(value)
        return value

    def owns(self, call: Mapping[str, Any]) -> None:
        """Raise :class:`_Malformed` when the answer shapes the model of a
        target another plugin registers (:data:`OWN_TARGET_HOOKS`): a plugin
        answers for its own targets, the core's defaults for every one."""
        may = self.manager.may_shape if self.manager is not None else None
        target = call.get("target")
        if may is None or self.hook not in OWN_TARGET_HOOKS or target is None:
            return
        key = getattr(target, "key", None)
        if isinstance(key, str) and not may(self.plugin, key):
            raise self.malformed(
                f"answered for target {key!r}, which another plugin registers: a plugin "
                "answers this hook for its own targets only"
            )

    # --- wrappers ---------------------------------------------------------------

    def new_style_wrapper(self, *args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
        call = self.call_kwargs(args, kwargs)
        teardown = self.start(args, kwargs)
        if teardown is None:
            return (yield)
        try:
            result = yield
        except BaseException as thrown:
            return self._after_exception(teardown, thrown, call)
        before = list(result) if isinstance(result, list) else result
        try:
            teardown.send(result)
        except StopIteration as stop:
            return self._accept(stop.value, result, before, call)
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            self._restore(result, before)
            self.fail(exc)
            return result
        teardown.close()
        self._restore(result, before)
        self.fail(self.malformed("wrapper yielded twice"))
        return result

    def _after_exception(
        self, teardown: Teardown, thrown: BaseException, call: Mapping[str, Any]
    ) -> Any:
        """Throw an inner exception into the wrapper, as pluggy does; the
        wrapper may answer instead, re-raise, or fail (then it passes through)."""
        try:
            teardown.throw(thrown)
        except StopIteration as stop:
            try:
                return self.replacement(stop.value, None, None, call)
            except BaseException as exc:
                if not is_plugin_fault(exc):
                    raise
                self.fail(exc)
        except BaseException as exc:
            if exc is thrown or not is_plugin_fault(exc):
                raise
            self.fail(exc)
        else:
            teardown.close()
            self.fail(self.malformed("wrapper yielded twice"))
        raise thrown

    def _accept(self, value: Any, result: Any, before: Any, call: Mapping[str, Any]) -> Any:
        try:
            return self.replacement(value, result, before, call)
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            self._restore(result, before)
            self.fail(exc)
            return result

    @staticmethod
    def _restore(result: Any, before: Any) -> None:
        """Undo a wrapper's in-place edits of a collecting hook's result list."""
        if isinstance(result, list) and isinstance(before, list):
            result[:] = before

    def old_style_wrapper(self, *args: Any, **kwargs: Any) -> Generator[None, Any, None]:
        call = self.call_kwargs(args, kwargs)
        teardown = self.start(args, kwargs)
        outcome = yield
        if teardown is None:
            return
        error = outcome.exception
        result = None if error is not None else outcome.get_result()
        before = list(result) if isinstance(result, list) else result

        def restore() -> None:
            self._restore(result, before)
            if error is not None:
                outcome.force_exception(error)
            else:
                outcome.force_result(result)

        def failed(exc: BaseException) -> None:
            restore()
            try:
                self.fail(exc)
            except Exception as raised:  # strict mode: the call fails with it
                outcome.force_exception(raised)

        try:
            teardown.send(outcome)
        except StopIteration:
            pass
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            failed(exc)
            return
        else:
            teardown.close()
            failed(self.malformed("wrapper yielded twice"))
            return
        if outcome.exception is not None:
            return
        try:
            outcome.force_result(self.replacement(outcome.get_result(), result, before, call))
        except BaseException as exc:
            if not is_plugin_fault(exc):
                raise
            failed(exc)
