# Board: one image for the web processes and the background loops.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 UV_LINK_MODE=copy UV_PROJECT_ENVIRONMENT=/opt/venv PATH="/opt/venv/bin:$PATH"
RUN pip install --no-cache-dir uv==0.13.9
WORKDIR /app
COPY pyproject.toml README.md ./
RUN uv sync --no-dev --no-install-project
COPY . .
EXPOSE 8000
# With DATABASE_URL set, Board uses that server; --no-loops lets a separate service run them.
CMD ["python", "manage.py", "up", "--host", "0.0.0.0", "--port", "8000"]
