# The image of both services (and the migration job) in compose.yaml.
FROM python:3.12-slim

WORKDIR /build
COPY pyproject.toml README.md ./
COPY artcat ./artcat
COPY common ./common
COPY auth_server ./auth_server
COPY resource_server ./resource_server
COPY migrations ./migrations
RUN pip install --no-cache-dir . && rm -rf /build

RUN useradd --system --uid 10001 --home-dir /tmp artcat
USER artcat
WORKDIR /tmp
ENV INSTANCE_DIR=/tmp/instance PYTHONUNBUFFERED=1
EXPOSE 8000
# artcat serve is the container's first process: SIGTERM reaches granian, which stops its
# workers gracefully (SHUTDOWN_GRACE). ENVIRONMENT=production (compose.yaml) picks granian.
STOPSIGNAL SIGTERM
CMD ["artcat", "serve", "resource", "--host", "0.0.0.0", "--port", "8000"]
