# LawLuo on CPU: the web app with the prebuilt assets (statute database, search indexes), no language model
# unless configured. Models run elsewhere (an OpenAI-compatible server such as vLLM: compose.yaml).
#
#   docker build -t lawluo --build-arg GIT_COMMIT=$(git rev-parse HEAD) .
#   docker run -p 7860:7860 -v lawluo-annotation:/data/annotation lawluo
#   docker run -p 7860:7860 -v lawluo-annotation:/data/annotation \
#       -e LAWLUO_CONFIG=configs/hosted-deepseek.yaml -e DEEPSEEK_API_KEY=... lawluo
#
# docs/deployment.md explains the settings, the volume and the health check.
FROM python:3.11-slim

# libgomp1: the OpenMP runtime LightGBM's and faiss' wheels link against. Not pinned: Debian replaces a
# package version on each point release, and the base image's release already fixes it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/*

# uid 1000, as on Hugging Face Spaces; the app never runs as root.
RUN useradd --create-home --uid 1000 app
WORKDIR /app

# The pinned requirements first (a layer that changes only with requirements.txt): the app's packages and,
# below the file's line, every other package of their tree, so the image gets the versions the tests ran
# with; `pip check` stops the build if they do not fit together. torch comes from PyTorch's CPU index: the
# same version (torch==2.13.0 matches 2.13.0+cpu) without the CUDA libraries (gigabytes).
COPY requirements.txt .
RUN pip install --no-cache-dir --disable-pip-version-check \
        --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt \
    && pip check --disable-pip-version-check

# The repository as committed, prebuilt assets included (.dockerignore leaves out caches, tests, .git).
COPY . .
# Byte-compiled once here: the app user cannot write __pycache__ under /app, and a start should not compile.
RUN python -m compileall -q app.py lawluo eval_ui

# The annotation store lives on a volume (owned by the app user, so a new named volume is writable);
# search-index caches (built only when the shipped ones do not match the assets) in the user's home.
RUN mkdir -p /data/annotation /home/app/.cache/lawluo-index \
    && chown -R app:app /data /home/app/.cache
VOLUME ["/data/annotation"]

ARG GIT_COMMIT=""
ENV GIT_COMMIT=${GIT_COMMIT} \
    PYTHONUNBUFFERED=1 \
    GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860 \
    GRADIO_ANALYTICS_ENABLED=False \
    LAWLUO_ANNOTATION_DIR=/data/annotation \
    LAWLUO_CACHE_DIR=/home/app/.cache/lawluo-index \
    HF_HOME=/home/app/.cache/huggingface

USER 1000
EXPOSE 7860
# python as PID 1 has no SIGTERM handler, so `docker stop` waited 10 s and killed it (exit 137); on SIGINT
# Gradio closes the server and the app exits 0 within ~2 s.
STOPSIGNAL SIGINT
# /healthz answers 200 when the statute database is readable and a probe file can be written, fsynced and
# deleted in the annotation volume (a full disk: 503 "disk_full"; probed at most every 5 s), else 503.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/healthz', timeout=4)"]
CMD ["python", "app.py"]
