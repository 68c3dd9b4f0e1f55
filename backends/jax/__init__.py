"""JAX: jax.lax eager (`jax`) and jit-compiled (`jax-jit`)."""
