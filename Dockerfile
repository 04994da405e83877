# Theoria Audit: one image for the web (gunicorn) and worker (django-q2) processes.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /app
# torch first, the CPU build: any other torch pulls gigabytes of CUDA wheels.
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY . .
RUN pip install --no-cache-dir -e . && python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "-c", "theoria/gunicorn.conf.py", "theoria.wsgi:application"]
