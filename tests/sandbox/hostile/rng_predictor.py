"""Hostile bot: reproduces the other seats' random streams from what it is
sent (issue 35, finding 4). Every seat is sent the same ``match_id``; the
SDK and the starters once seeded their generator with
``f"{match_id}:{seat}"``. At ``start`` this seat writes the seeds it can
derive, one JSON line on stderr: ``{"candidates": [...]}`` (the judge
replays each as the victim's stream, granting it the victim's legal lists);
then it plays the first legal action."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        match_id, me = message.get("match_id"), message["seat"]
        others = [seat for seat in range(message["num_players"]) if seat != me]
        candidates = [f"{match_id}:{seat}" for seat in others] + [str(match_id)]
        sys.stderr.write(json.dumps({"candidates": candidates}) + "\n")
        sys.stderr.flush()
        reply = {"type": "ready"}
    elif message["type"] == "act":
        first = message["legal"][0]
        if first["type"] == "distribute":
            first = {"type": "distribute", "chips": {first["cards"][0]: first["total"]} if first["total"] else {}}
        reply = {"type": "action", "action": first}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
