# The expert tier's image: Ray Serve and the local backend (torch, transformers), for
# deploy/compose.yaml's ray-head and ray-gpu and deploy/kuberay/rayservice.yaml. The
# graph's own image (langgraph build) does not need it: its workers call the tier over
# HTTP. Every node of one Ray cluster runs the same Python and Ray, so build both from
# here (docs/guides/experts-tier.md):
#
#   docker build -f deploy/tier.Dockerfile -t hugginggpt-tier .
#   docker build -f deploy/tier.Dockerfile -t hugginggpt-tier-gpu \
#     --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu126 .
FROM python:3.11-slim-bookworm
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 \
    HF_HOME=/data/huggingface RAY_USAGE_STATS_ENABLED=0
# torch first, from PyTorch's index (the pin is pyproject.toml's local extra's)
RUN pip install --index-url "$TORCH_INDEX" torch==2.13.0
COPY . /src/hugginggpt
RUN pip install "/src/hugginggpt[local,ray]"
RUN mkdir -p /data/huggingface /data/shared
VOLUME ["/data/huggingface", "/data/shared"]
