in vec4 v_value;
layout (location = 0) out vec4 out_value;
void main() {
    out_value = v_value;
}
