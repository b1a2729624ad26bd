"""What runs on a worker beside the services: the seats of a match that no
bot holds (a person's, ladder.worker.casual). The tasks (ladder.tasks) call
in here; nothing in ladder.services imports it."""
