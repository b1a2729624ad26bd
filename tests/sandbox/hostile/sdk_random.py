"""An SDK bot that plays a uniformly random legal action drawn from
``context.rng`` (as builtin:ismcts and the numpy starter draw from it),
filling Allegory's ``distribute`` chip by chip from the same stream."""
import cardroom_sdk


def choose(observation, legal, context):
    action = context.rng.choice(legal)
    if action["type"] == "distribute":
        chips = {}
        for _ in range(action["total"]):
            card = context.rng.choice(action["cards"])
            chips[card] = chips.get(card, 0) + 1
        return {"type": "distribute", "chips": chips}
    return action


cardroom_sdk.run(choose)
