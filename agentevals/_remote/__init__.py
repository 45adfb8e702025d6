"""Remote scoring, agent side: the message codec both sides share, the forwarder that publishes
accepted runs to a broker (RabbitMQ or Redis, through Dramatiq) and the SQLite spool that holds them
until the broker confirmed them."""
