"""The command-running worker behind ``manage.py work``: plain HTTP, no Django."""
