"""The Board people use: views, their form input, wording and template tags."""
