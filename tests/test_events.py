"""The one event stream's hub: order, resuming after a known id, bounded queues, closing."""

from __future__ import annotations

import asyncio
import threading

from projector_core.events import RESET, EventHub


def test_every_subscriber_gets_every_event_in_the_order_published():
    hub = EventHub()
    first, second = hub.subscribe(), hub.subscribe()
    threads = [threading.Thread(target=lambda n=n: [hub.publish("step", "added", {"n": n, "i": i})
                                                    for i in range(50)]) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    got = [first.get(1), second.get(1)]
    assert got[0] is not None and len(got[0]) == 200
    assert [e.id for e in got[0]] == [e.id for e in got[1]]
    assert [e.seq for e in got[0]] == sorted(e.seq for e in got[0])
    for n in range(4):
        assert [e.data["i"] for e in got[0] if e.data["n"] == n] == list(range(50))


def test_a_follower_resumes_after_the_last_id_it_saw():
    hub = EventHub(history=10)
    seen = hub.subscribe()
    hub.publish("run", "added", {"run": "a"})
    [last] = seen.get(1) or []
    seen.close()
    hub.publish("run", "added", {"run": "b"})  # while it was away
    hub.publish("run", "changed", {"run": "b"})
    resumed = hub.subscribe(last.id)
    assert resumed.start_id == last.id
    assert [(e.action, e.data["run"]) for e in resumed.get(1) or []] == [
        ("added", "b"), ("changed", "b")]
    fresh = hub.subscribe()
    assert fresh.start_id == hub.last_id and fresh.get(0) == []


def test_a_follower_that_cannot_resume_is_told_to_read_the_state_again():
    hub = EventHub(history=3)
    old = hub.subscribe()
    hub.publish("run", "added", {"run": "a"})
    [seen] = old.get(1) or []
    for i in range(5):  # more than the hub keeps
        hub.publish("run", "added", {"run": str(i)})
    [reset] = hub.subscribe(seen.id).get(1) or []
    assert reset.kind == RESET and reset.id == hub.last_id
    [other] = hub.subscribe("another-server-7").get(1) or []  # another server's id
    assert other.kind == RESET


def test_a_slow_follower_holds_a_bounded_queue_coalesced_by_key_then_reset():
    hub = EventHub(queue_limit=10)
    slow = hub.subscribe()
    hub.publish("step", "added", {"state": "loading"}, key="s1")
    for i in range(20):  # the same thing changing: only its latest state is kept
        hub.publish("step", "changed", {"state": f"v{i}"}, key="s1")
    hub.publish("run", "added", {"run": "r"}, key="r")
    events = slow.get(1) or []
    assert len(events) <= 10
    assert [(e.kind, e.action) for e in events][-2:] == [("step", "added"), ("run", "added")]
    assert events[-2].data["state"] == "v19"  # added, then changed: still added, as it is now

    for i in range(30):  # thirty different things: cannot be coalesced
        hub.publish("step", "added", {"i": i}, key=f"k{i}")
    events = slow.get(1) or []
    assert events[0].kind == RESET and len(events) <= 10
    assert events[-1].data == {"i": 29}  # what came after the reset is kept


def test_closing_the_hub_ends_waiting_followers_in_threads_and_event_loops():
    hub = EventHub()
    threaded, looped = hub.subscribe(), hub.subscribe()
    answers: list[object] = []
    waiting = threading.Thread(target=lambda: answers.append(threaded.get(30)))
    waiting.start()

    async def follow() -> object:
        first = await looped.next(30)
        hub.close()
        return first, await looped.next(30)

    async def publish_soon() -> None:
        await asyncio.sleep(0)
        hub.publish("run", "added", {"run": "a"})

    async def both() -> object:
        followed, _ = await asyncio.gather(follow(), publish_soon())
        return followed

    first, after_close = asyncio.run(both())
    waiting.join(10)
    assert [e.data for e in first] == [{"run": "a"}]
    assert after_close is None
    [answer] = answers  # woken by the event, or (started late) by the close
    assert answer is None or [e.data for e in answer] == [{"run": "a"}]  # type: ignore[attr-defined]
    assert threaded.get(30) is None
    assert hub.subscribe().get(0) is None  # a follower arriving after the close ends at once
