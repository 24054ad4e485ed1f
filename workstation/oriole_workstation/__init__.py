"""Running the system on one machine: embedded Postgres, moto for AWS, the CLI."""
