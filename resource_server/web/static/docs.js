// Start Swagger UI on the served OpenAPI document (a file, so the page's CSP needs no inline script).
window.addEventListener("load", function () {
  var target = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: target.getAttribute("data-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
  });
});
