"""What runs on a worker beside the services: the seats of a match that no
bot holds (a person's, ladder.worker.casual) and the sandbox policy that
starts the bots' (ladder.worker.sandbox, registered by ladder.apps). The
tasks (ladder.tasks) call in here; nothing in ladder.services imports it."""
