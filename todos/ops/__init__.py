"""What runs beside the requests: the background loops, bulk jobs, the demo, and the SQL catalog
with its renderer."""
