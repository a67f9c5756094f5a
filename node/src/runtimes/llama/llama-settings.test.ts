import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.js';
import { llamaSettings, parseGpuLayers } from './llama-settings.js';

// No GPU here: the GPU options are checked as the settings node-llama-cpp receives.
describe('llamaSettings', () => {
  test('default: node-llama-cpp picks the backend and fits the layers to free VRAM, on every GPU', () => {
    expect(llamaSettings({ gpu: 'auto', gpuLayers: 'auto' })).toEqual({
      getLlama: { gpu: 'auto' },
      loadModel: { gpuLayers: 'auto' },
      env: {},
    });
  });

  test('behavior: --gpus picks the devices for CUDA and Vulkan; --gpu-layers max or a count', () => {
    expect(llamaSettings({ gpu: 'auto', gpuLayers: 'max', gpus: [0, 2] })).toEqual({
      getLlama: { gpu: 'auto' },
      loadModel: { gpuLayers: 'max' },
      env: { CUDA_VISIBLE_DEVICES: '0,2', GGML_VK_VISIBLE_DEVICES: '0,2' },
    });
    expect(llamaSettings({ gpu: 'auto', gpuLayers: 20 }).loadModel).toEqual({ gpuLayers: 20 });
  });

  test('behavior: the CPU build offloads nothing and sets no device list, whatever was asked', () => {
    expect(llamaSettings({ gpu: false, gpuLayers: 'max', gpus: [1] })).toEqual({
      getLlama: { gpu: false },
      loadModel: { gpuLayers: 0 },
      env: {},
    });
  });

  test('behavior: the flags as configured reach the settings; bad values name the flag', () => {
    const config = loadConfig({
      flags: { 'gpu-layers': '33', gpus: '0,1', 'state-dir': '/tmp/gm-x' },
      env: {},
    });
    expect(parseGpuLayers(config.gpuLayers)).toBe(33);
    expect(config.gpus).toBe('0,1');
    expect(parseGpuLayers(loadConfig({ flags: { 'state-dir': '/tmp/gm-x' }, env: {} }).gpuLayers)).toBe(
      'auto',
    );
    expect(() => loadConfig({ flags: { 'gpu-layers': 'all' }, env: {} })).toThrow(/gpu-layers|gpuLayers/);
    expect(() => loadConfig({ flags: { gpus: 'first' }, env: {} })).toThrow(/gpus/);
  });
});
