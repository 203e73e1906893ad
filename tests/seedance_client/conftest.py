"""The model bucket (moto) and a model directory, as the platform's publishing tests make them."""

from tests.seedance.test_model_publish import model, s3  # noqa: F401 (fixtures)
