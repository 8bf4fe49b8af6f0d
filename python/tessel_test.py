"""tessel (Python) on CNNs: a small PyTorch model exported to ONNX, compiled with tessel.compile (f32 and
int8) and run, against PyTorch; the test build's artifact against `tessel run`'s output; misuse.

Tolerances: f32 against PyTorch 1e-4 absolute (logits of magnitude ~1; the kernels reorder sums);
against `tessel run` 1e-6 (the same runtime); int8 against PyTorch: the same top-1 class and a relative
L2 error under 5%.

Run with /usr/bin/python3 (Debian's PyTorch); TESSEL_LIBRARY, TESSEL_CLI and TESSEL_TESTDATA
(capi/testdata's files) come from the Bazel test (python/BUILD)."""
import io
import os
import threading
import unittest

import numpy as np
import torch
import torch.nn as nn

import tessel


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 8, 3, stride=2),
                                  nn.ReLU(), nn.Flatten(), nn.Linear(8 * 7 * 7, 5))

    def forward(self, x):
        return self.body(x)


def export(model, x):
    f = io.BytesIO()
    torch.onnx.export(model, x, f, input_names=["image"], output_names=["scores"], opset_version=13)
    return f.getvalue()


class CompileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.torch_model = Net().eval()
        cls.x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            cls.expected = cls.torch_model(cls.x).numpy()
        cls.onnx = export(cls.torch_model, cls.x)

    def test_compile_bytes_matches_pytorch(self):
        model = tessel.compile(self.onnx)
        self.assertEqual([(i.name, i.shape) for i in model.inputs], [("image", (1, 3, 16, 16))])
        self.assertEqual([(o.name, o.shape, o.dtype) for o in model.outputs], [("scores", (1, 5), np.float32)])
        out = model.run({"image": self.x.numpy()})
        np.testing.assert_allclose(out["scores"], self.expected, rtol=0, atol=1e-4)

    def test_compile_path_and_preallocated_output(self):
        path = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "net.onnx")
        with open(path, "wb") as f:
            f.write(self.onnx)
        model = tessel.compile(path)
        scores = np.zeros((1, 5), np.float32)
        result = model.session().run({"image": self.x.numpy()}, out={"scores": scores})
        self.assertIs(result["scores"], scores)
        np.testing.assert_allclose(scores, self.expected, rtol=0, atol=1e-4)

    def test_int8_close_to_pytorch(self):
        calibration = [torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(10 + i)).numpy()[0]
                       for i in range(8)]
        model = tessel.compile(self.onnx, quantize="int8", calibration=calibration)
        session = model.session()
        session.set_profiling(True)
        got = session.run({"image": self.x.numpy()})["scores"]
        # The convolutions really run in 8 bits (qu8 / qs8 kernels), so the error is not zero either.
        self.assertTrue(any("q" in kernel and "8_conv" in kernel for _, kernel, _ in session.profile()),
                        session.profile())
        self.assertEqual(int(got.argmax()), int(self.expected.argmax()))
        rel = np.linalg.norm(got - self.expected) / np.linalg.norm(self.expected)
        self.assertLess(rel, 0.05)
        self.assertGreater(rel, 1e-5)

    def test_sessions_on_two_threads(self):
        model = tessel.compile(self.onnx)
        errors = []

        def work():
            s = model.session()
            for _ in range(10):
                out = s.run({"image": self.x.numpy()})["scores"]
                if np.abs(out - self.expected).max() > 1e-4:
                    errors.append(out)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_compile_error(self):
        with self.assertRaises(tessel.TesselError) as e:
            tessel.compile(b"not an onnx model")
        self.assertIn("tessel compile failed", str(e.exception))


class ArtifactTest(unittest.TestCase):
    def setUp(self):
        self.data = os.environ["TESSEL_TESTDATA"]
        self.x = np.load(os.path.join(self.data, "tiny_cnn", "input.npy"))

    def test_matches_cli_and_pytorch(self):
        model = tessel.load(os.path.join(self.data, "tiny_cnn.tsl"))
        out = model.run({"input": self.x})["logits"]
        np.testing.assert_allclose(out, np.load(os.path.join(self.data, "tiny_cnn_cli_output.npy")), rtol=0, atol=1e-6)
        np.testing.assert_allclose(out, np.load(os.path.join(self.data, "tiny_cnn", "torch_output.npy")), rtol=0,
                                   atol=1e-4)

    def test_load_bytes_and_profile(self):
        with open(os.path.join(self.data, "tiny_cnn.tsl"), "rb") as f:
            model = tessel.load(f.read())
        s = model.session()
        s.set_profiling(True)
        out = s.run({"input": self.x})["logits"]
        np.testing.assert_allclose(out, np.load(os.path.join(self.data, "tiny_cnn_cli_output.npy")), rtol=0, atol=1e-6)
        profile = s.profile()
        self.assertGreaterEqual(len(profile), 3)
        self.assertTrue(all(name and kernel and ms >= 0 for name, kernel, ms in profile))

    def test_misuse(self):
        model = tessel.load(os.path.join(self.data, "tiny_cnn.tsl"))
        with self.assertRaises(tessel.TesselError) as e:
            model.run({"input": self.x[:, :, :8]})
        self.assertEqual(e.exception.status, "TESSEL_INVALID_ARGUMENT")
        self.assertIn("input 'input' has shape [1,3,16,16], got [1,3,8,16]", str(e.exception))
        with self.assertRaises(tessel.TesselError) as e:
            model.run({"input": self.x.astype(np.float64)})
        self.assertIn("input 'input' has dtype f32", str(e.exception))
        with self.assertRaises(KeyError):
            model.run({"image": self.x})
        with self.assertRaises(tessel.TesselError) as e:
            tessel.load("/nonexistent.tsl")
        self.assertEqual(e.exception.status, "TESSEL_NOT_FOUND")
        self.assertRegex(tessel.version(), r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
